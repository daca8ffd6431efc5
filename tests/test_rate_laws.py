"""Steady-state rate laws of the window-based congestion controllers, measured through the
`fixed` AQM (switch.aqm kind "fixed": every packet is marked with probability p, whatever the
queue holds). One long flow host 0 -> ToR -> host 1, 10 Gbit/s links (far from saturation
at every point below), base RTT R set by the link delays, packets of 1460 B of payload.

The laws assume deterministic losses or a cut in every RTT; Bernoulli marks and Linux's CWR
round trip after each ECN cut (no growth, further ECN-Echoes ignored: host/tcp.rs) move the
constants, so each tolerance below says which way and why. bench/peers/ns3/ runs the same
experiment in ns-3 3.44 (whose TCP has the same CWR state) for comparison.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Optional

import pytest

import dcnsim

MSS = 1460


def _rate(tmp_path: Path, kind: str, p: float, rtt_s: float, seconds: float, skip: float = 0.0, seed: int = 1) -> float:
    """Packets per second delivered by one flow, after the first `skip` seconds (a whole
    number of the 1 s goodput bins)."""
    assert skip == int(skip)
    delay_us = rtt_s / 4 * 1e6  # two links each way
    text = f"""
[scenario]
name = "law"
seed = {seed}
max_time = "{seconds}s"
[topology]
kind = "clos2"
tors = 1
servers_per_tor = 2
spines = 1
host_link = {{ rate = "10Gbps", delay = "{delay_us:g}us" }}
[switch]
buffer = {{ queue = "100MB" }}
aqm = {{ kind = "fixed", p = {p} }}
[transport]
kind = "{kind}"
ecn = true
min_rto = "200ms"
[[workload]]
kind = "flows"
flows = [ {{ src = 0, dst = 1, size = "1000GB" }} ]
[metrics]
throughput_bin = "1s"
"""
    path = tmp_path / f"{kind}_{p}_{rtt_s}.toml"
    path.write_text(text)
    r = dcnsim.run(str(path))
    assert r.summary["end_reason"] == "max_time"
    ts = r.timeseries
    late = ts[ts["bin_start_ps"] >= skip * 1e12]
    return float(late["bytes"].sum()) / MSS / (seconds - skip)


def test_reno_follows_mathis(tmp_path):
    """Reno with classic ECN: 1.22 / (R sqrt(p)) packets/s (Mathis et al. 1997, periodic
    losses). A cut's round trip in CWR grows nothing and ignores the marks of the data that
    was in flight, so growth and counted marks both come from the packets sent after the
    cut: the balance is Mathis's, and Bernoulli marks move it by a few per cent (ns-3 3.44
    NewReno on the same experiment: bench/peers/ns3/). Measured rate within [0.9, 1.15] x the
    law at two p a decade apart, and their ratio within 10% of sqrt(10)."""
    r = 0.001
    rates = {p: _rate(tmp_path, "reno", p, r, 20, skip=2) for p in (0.01, 0.001)}
    for p, x in rates.items():
        law = 1.22 / (r * math.sqrt(p))
        assert 0.9 <= x / law <= 1.15, f"p {p}: {x:.0f} pkt/s, law {law:.0f}"
    assert abs(rates[0.001] / rates[0.01] / math.sqrt(10) - 1) < 0.1


def test_dctcp_follows_sqrt2_over_rp(tmp_path):
    """DCTCP under probabilistic marking (seed 002's "non on/off" DCTCP). With alpha = p a
    cut takes W p / 2; the CWR round trip after it grows nothing and ignores the marks on the
    window that was in flight, so the next cut comes at the first counted mark, about 1 / p
    ACKs later, each growing the window by 1 / W: W p / 2 = 1 / (W p) gives W = sqrt(2) / p,
    a rate of sqrt(2) / (R p) = 0.71 x the 2 / (R p) of a cut in every RTT (ns-3 3.44's
    DCTCP, whose CWR state is Linux's, gives about 0.70 x; without the CWR hold the window
    would be (1 + sqrt 3) / p). The window's sawtooth sits a little below its peak: measured
    within [0.85, 1.1] x sqrt(2) / (R p) at two p, and scaling as 1 / p within 10%."""
    r = 0.001
    rates = {p: _rate(tmp_path, "dctcp", p, r, 3, skip=1) for p in (0.01, 0.05)}
    for p, x in rates.items():
        law = math.sqrt(2) / (r * p)
        assert 0.85 <= x / law <= 1.1, f"p {p}: {x:.0f} pkt/s, law {law:.0f}"
    assert abs(rates[0.01] / rates[0.05] / 5 - 1) < 0.1


def test_cubic_reno_friendly_region_matches_reno(tmp_path):
    """At R = 1 ms and p = 1%, W_cubic (0.19 segments) is far below the Reno-friendly window
    (12.2): Cubic runs as Reno (RFC 9438 sec. 4.3, with Linux's constant alpha_cubic), its
    rate within 10% of Reno's (ns-3 3.44 on the same experiment: 0.996 x)."""
    cubic = _rate(tmp_path, "cubic", 0.01, 0.001, 20, skip=2)
    reno = _rate(tmp_path, "reno", 0.01, 0.001, 20, skip=2)
    assert abs(cubic / reno - 1) < 0.1, f"cubic {cubic:.0f}, reno {reno:.0f} pkt/s"


def test_cubic_region_follows_rfc9438_average_window(tmp_path):
    """At R = 100 ms and p = 1e-4 and 3e-5 the cubic window 1.054 (R / p)^(3/4) (187 and 461
    segments) exceeds the Reno-friendly one (122 and 223): the rate is that window per RTT.
    The average assumes a loss every 1/p packets; with Bernoulli marks the convex growth
    through the longer gaps raises it: a per-RTT Monte Carlo of RFC 9438 and the Cubic
    module driven alone by Bernoulli ECN-Echoes both give 1.08-1.18 x the law, with a spread
    of about +-10% between seeds over 1900 s. Measured over 1900 s after a 100 s warm-up
    (the slow-start overshoot to thousands of segments takes tens of seconds to converge
    away): within [1.0, 1.4] x the law, and scaling as p^(-3/4) within 20%."""
    r = 0.1
    rates = {p: _rate(tmp_path, "cubic", p, r, 2000, skip=100) for p in (1e-4, 3e-5)}
    for p, x in rates.items():
        law = 1.054 * (r / p) ** 0.75 / r
        assert law * r > 1.22 / math.sqrt(p)
        assert 1.0 <= x / law <= 1.4, f"p {p}: {x:.0f} pkt/s, law {law:.0f}"
    assert abs(rates[3e-5] / rates[1e-4] / (1e-4 / 3e-5) ** 0.75 - 1) < 0.2
