"""Seed 001's mechanisms end to end (Wadekar, McAlpine, Gupta, Intel, IEEE 802.3, 2004):
Directional Rate Control against 802.3x head-of-line blocking, L2 congestion indication
(RED marking in the L2 switch, TCP hosts reacting with ECN), and the zero-drop claims of
802.3x and DRC_RED_ECN on the mixed-speed system. DRC's levels and spacing, the closed-loop
generator and the receiver window are checked beside the code (switch/drc.rs,
workload/closed_loop.rs, host/tcp.rs)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import dcnsim

HOL = str(Path(__file__).parent / "scenarios" / "drc_hol.toml")


def _rates(r, after_ps: float = 1e9) -> dict:
    ts = r.timeseries
    late = ts[ts["bin_start_ps"] >= after_ps]
    secs = (late["bin_start_ps"].max() - after_ps) / 1e12 + 1e-4
    return (late.groupby("tag")["bytes"].sum() * 8 / secs / 1e9).to_dict()


def test_drc_frees_the_victim_direction_802_3x_blocks():
    """Client 1 sends to both servers at line rate, clients 2 and 3 to server 1 (10G links).
    Under DRC the switch limits only client 1's server-1 direction: server 1's 10 Gbit/s
    are shared three ways (3.3 each) and client 1's server-2 traffic takes the rest of its
    link (6.7). Under 802.3x client 1's whole link is paused for server 1 and its server-2
    traffic gets about what its server-1 traffic gets. Tolerance 10%; both lossless."""
    pause = _rates(dcnsim.run(HOL, variant="802.3x"))
    drc_run = dcnsim.run(HOL, variant="DRC")
    drc = _rates(drc_run)
    assert drc["c1-s2"] == pytest.approx(10 - 10 / 3, rel=0.1), drc
    for t in ("c1-s1", "c2-s1", "c3-s1"):
        assert drc[t] == pytest.approx(10 / 3, rel=0.1), drc
    assert pause["c1-s2"] < 0.6 * drc["c1-s2"], (pause, drc)
    assert drc_run.summary["data_packets_dropped"] == 0
    assert drc_run.summary["drc_frames"] > 0


@pytest.fixture(scope="module")
def mixed():
    return {v: dcnsim.run("seed001_mixed_small", variant=v) for v in dcnsim.validate("seed001_mixed_small")["variants"]}


@pytest.mark.parametrize("buffer", ["64KB", "32KB"])
def test_802_3x_and_drc_red_ecn_drop_nothing(mixed, buffer):
    """The seed's drop counts: 802.3x 0 / 0 and DRC_RED_ECN 0 / 0 at 64 KB / 32 KB per port,
    where RED without flow control drops."""
    assert mixed[f"802.3x {buffer}"].summary["data_packets_dropped"] == 0
    assert mixed[f"DRC_RED_ECN {buffer}"].summary["data_packets_dropped"] == 0
    assert mixed[f"NoFC_RED {buffer}"].summary["data_packets_dropped"] > 0


def test_l2_congestion_indication_marks_tcp_and_cuts_drops(mixed):
    """L2-CI: the L2 switch's RED marks ECN-capable TCP (CE reaches the hosts, whose ECN-Echo
    makes the sender cut its window); against RED dropping, drops fall and the entries'
    throughput rises (64 KB per port)."""
    red, ci = mixed["NoFC_RED 64KB"], mixed["NoFC_RED_ECN 64KB"]
    assert (ci.flows["ecn_marks"] > 0).sum() > 0
    assert (red.flows["ecn_marks"] > 0).sum() == 0
    assert ci.summary["data_packets_dropped"] < red.summary["data_packets_dropped"]
    done = lambda r: r.flows[r.flows["finished"].astype(bool)]["size_bytes"].sum()
    assert done(ci) > done(red)


def test_drc_lifts_throughput_over_802_3x_on_the_backplane():
    """Seed 001's backplane model: 16 L2 generators all to all at line rate; at every
    per-port buffer DRC carries more than 802.3x (head-of-line blocking at the Tx ports),
    most at the smallest buffer."""
    r = {v: dcnsim.run("seed001_backplane_small", variant=v) for v in dcnsim.validate("seed001_backplane_small")["variants"]}
    gbps = {v: x.flows["delivered_bytes"].sum() * 8 / (x.summary["sim_time_ps"] / 1e12) / 1e9 for v, x in r.items()}
    for kb in (16, 64, 256):
        assert gbps[f"DRC {kb}KB"] > gbps[f"802.3x {kb}KB"], gbps
    assert gbps["DRC 16KB"] > 1.15 * gbps["802.3x 16KB"], gbps
    lat = r["DRC 64KB"].flows["mean_frame_latency_ps"]
    assert np.isfinite(lat).any() and (lat[np.isfinite(lat)] > 0).all()


def test_closed_loop_sends_the_next_entry_when_the_last_completes():
    """Each client-server pair has one entry in flight: a pair's flows never overlap, and the
    sizes average the truncated exponential's 8,000 B within 5%."""
    r = dcnsim.run("seed001_simple_small", variant="802.3x")
    f = r.flows[r.flows["finished"].astype(bool)].sort_values("start_ps")
    for (_, _), g in f.groupby(["src", "dst"]):
        assert (g["start_ps"].to_numpy()[1:] >= g["end_ps"].to_numpy()[:-1]).all()
    assert f["size_bytes"].mean() == pytest.approx(8000, rel=0.05)
