"""HPCC (`transport.cc = "hpcc"`, Li et al., SIGCOMM 2019) over in-band telemetry
(`switch.int`) end to end on a 100 Gbps dumbbell, against numbers derived from the
algorithm. HPCC's law (U, the reference window, fast reaction) is tested beside the code
(host/cc/hpcc.rs).

Derivations used here. With N flows at one bottleneck of rate C and S the sum of their
reference rates, every reference update maps R_i -> R_i eta / U + R_AI (an additive round
is the same with eta / U = 1, a multiplicative increase with eta / U > 1). The sum is
stationary when S (eta / U) + N R_AI = S, so the link settles at

    U* = eta S / (S - N R_AI)        (0.9516 for eta = 0.95, R_AI = C / 2500, N = 3)

and the gap between two flows shrinks by eta / U* = 1 - N R_AI / S per round (one base
RTT): a time constant of RTT x S / (N R_AI).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import dcnsim

LINK_BPS = 100e9
MTU = 1500
PAYLOAD = 1460
INT_HEADER, INT_HOP = 2, 8
BIN_US = 20.0
ETA = 0.95


def _run(tmp_path: Path, *, int_table: str = "int = {}", hpcc: str = "", join_ms: float = 1.0, max_ms: float = 2.0) -> dcnsim.Result:
    text = f"""
[scenario]
name = "hpcc_dumbbell"
seed = 1
max_time = "{max_ms}ms"
[topology]
kind = "dumbbell"
senders = 4
receivers = 1
host_link = {{ rate = "100Gbps", delay = "1us" }}
bottleneck = {{ rate = "100Gbps", delay = "1us" }}
[switch]
buffer = {{ model = "static", queue = "2MB" }}
pfc = {{ xoff = "1MB", xon = "900KB" }}
{int_table}
[transport]
kind = "roce"
cc = "hpcc"
{hpcc}
[metrics]
throughput_bin = "{BIN_US:g}us"
[[workload]]
kind = "flows"
flows = [
  {{ src = 0, dst = 4, size = "1GB" }}, {{ src = 1, dst = 4, size = "1GB" }},
  {{ src = 2, dst = 4, size = "1GB" }}, {{ src = 3, dst = 4, size = "1GB", start = "{join_ms}ms" }},
]
"""
    path = tmp_path / "hpcc.toml"
    path.write_text(text)
    return dcnsim.run(str(path))


def _port(r, a, b):
    p = r.ports
    return p[(p["node_name"] == a) & (p["peer_name"] == b)].iloc[0]


def _rates(r) -> "np.ndarray":
    """Goodput per flow (columns, flow id order) per bin (rows), Gbit/s."""
    ts = r.timeseries
    piv = ts.pivot_table(index="bin_start_ps", columns="flow", values="bytes", aggfunc="sum").fillna(0.0)
    piv = piv.reindex(columns=sorted(r.flows["flow_id"]), fill_value=0.0)
    return piv.index.to_numpy() / 1e6, piv.to_numpy() * 8 / (BIN_US * 1e-6) / 1e9


def test_int_records_are_on_the_wire(tmp_path):
    r = _run(tmp_path, max_ms=0.3)
    bn, last = _port(r, "left", "right"), _port(r, "right", "h4")
    # one record (with the INT header) leaving the first switch, a second leaving the last
    assert int(bn["tx_bytes"]) == int(bn["tx_packets"]) * (MTU + INT_HEADER + INT_HOP)
    assert int(last["tx_bytes"]) == int(last["tx_packets"]) * (MTU + INT_HEADER + 2 * INT_HOP)
    # the ACKs echo both records
    back = _port(r, "right", "left")
    assert int(back["tx_bytes"]) == int(back["tx_packets"]) * (64 + INT_HEADER + 2 * INT_HOP)
    assert r.summary["int_records"] == int(bn["tx_packets"]) + int(last["tx_packets"])
    assert r.summary["int_full"] == 0


def test_int_on_chosen_switches_only(tmp_path):
    r = _run(tmp_path, int_table='int = { switches = ["right"] }', max_ms=0.2)
    bn, last = _port(r, "left", "right"), _port(r, "right", "h4")
    assert int(bn["tx_bytes"]) == int(bn["tx_packets"]) * MTU
    assert int(last["tx_bytes"]) == int(last["tx_packets"]) * (MTU + INT_HEADER + INT_HOP)


def test_hpcc_holds_the_link_near_eta_with_a_near_empty_queue(tmp_path):
    r = _run(tmp_path)
    t_us, g = _rates(r)
    steady = (t_us >= 300) & (t_us < 1000)
    wire = g[steady][:, :3].sum(axis=1).mean() * (MTU + INT_HEADER + INT_HOP) / PAYLOAD
    n, s = 3, ETA * LINK_BPS / 1e9
    r_ai = LINK_BPS / 2500 / 1e9
    u_star = ETA * s / (s - n * r_ai)
    assert abs(wire / (LINK_BPS / 1e9) - u_star) < 0.01, (wire, u_star)
    bn = _port(r, "left", "right")
    # the first round trip starts three flows at line rate (up to 2 BDP of queue); after
    # that HPCC keeps the queue near empty: a mean of a few packets over the run
    assert float(bn["mean_depth_bytes"]) < 3 * MTU, float(bn["mean_depth_bytes"])
    assert int(bn["drops"]) == 0
    assert not r.summary.get("warnings")


def test_a_joining_flow_converges_at_the_derived_rate(tmp_path):
    r_ai_frac = 0.01
    r = _run(tmp_path, hpcc=f"hpcc = {{ rate_ai_fraction = {r_ai_frac} }}", max_ms=2.0)
    t_us, g = _rates(r)
    after = t_us >= 1000 + BIN_US
    gap = g[after].max(axis=1) - g[after].min(axis=1)
    # the base RTT: three 1 us links each way, a full packet out and an ACK back
    rtt_us = 6 + 3 * (MTU + INT_HEADER + INT_HOP) * 8 / LINK_BPS * 1e6
    s = g[after][-10:].sum(axis=1).mean() * (MTU + INT_HEADER + INT_HOP) / PAYLOAD
    tau_us = rtt_us * s / (4 * r_ai_frac * LINK_BPS / 1e9)
    assert gap[0] > 15, gap[:5]
    # the time the gap takes to fall to 1/e of its first value
    below = np.nonzero(gap < gap[0] / math.e)[0]
    assert len(below), gap
    fall_us = t_us[after][below[0]] - t_us[after][0]
    assert 0.4 * tau_us < fall_us < 2.5 * tau_us, (fall_us, tau_us)
    late = g[t_us >= 1600]
    jain = late.sum(axis=1) ** 2 / (4 * (late**2).sum(axis=1))
    assert jain.mean() > 0.99, jain.mean()


def test_hpcc_without_int_is_warned(tmp_path):
    with pytest.warns(dcnsim.DcnsimWarning, match="switch.int"):
        r = _run(tmp_path, int_table="", max_ms=0.2)
    assert any("switch.int" in w for w in r.summary["warnings"]), r.summary["warnings"]


@pytest.mark.parametrize(
    "table, key",
    [
        ("hpcc = { eta = 1.5 }", "transport.hpcc.eta"),
        ("hpcc = { min_rate = \"0bps\" }", "transport.hpcc.min_rate"),
        ("hpcc = { base_rtt = \"0us\" }", "transport.hpcc.base_rtt"),
    ],
)
def test_bad_hpcc_values_name_the_key(tmp_path, table, key):
    with pytest.raises(dcnsim.ScenarioError, match=key.replace(".", r"\.")):
        _run(tmp_path, hpcc=table, max_ms=0.1)


@pytest.mark.parametrize(
    "table, key, says",
    [
        ('int = { switches = ["h0"] }', "switch.int.switches[0]", "a host"),
        ('int = { switches = ["lft"] }', "switch.int.switches[0]", "left"),
        ('int = { hop_bytes = "2000B" }', "switch.int.hop_bytes", "MTU"),
    ],
)
def test_bad_int_values_name_the_key(tmp_path, table, key, says):
    with pytest.raises(dcnsim.ScenarioError) as e:
        _run(tmp_path, int_table=table, max_ms=0.1)
    assert key in str(e.value) and says in str(e.value), str(e.value)
