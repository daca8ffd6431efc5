"""AQMs of `switch.aqm` end to end: PI2 holds the queue delay at its target whatever the
load (seed 002's Classic AQM, RFC 9332's controller), and RED as tc configures it keeps the
average queue between its thresholds. The controllers' arithmetic is checked beside the
code (switch/pi2.rs, switch/red.rs)."""

from __future__ import annotations

from pathlib import Path
from typing import Dict

import pytest

import dcnsim

RATE = 40e6  # seed 002's access bottleneck


def _dumbbell(tmp_path: Path, flows: int, aqm: str, ecn: bool = True, seconds: int = 60) -> Dict:
    """`flows` Reno flows over a 40 Mbit/s bottleneck, base RTT 8 ms (seed 002)."""
    specs = ", ".join(f'{{ src = {i}, dst = {flows}, size = "10GB" }}' for i in range(flows))
    text = f"""
[scenario]
name = "aqm"
seed = 1
max_time = "{seconds}s"
[topology]
kind = "dumbbell"
senders = {flows}
host_link = {{ rate = "1Gbps", delay = "1us" }}
bottleneck = {{ rate = "40Mbps", delay = "1996us" }}
[switch]
buffer = {{ queue = "1600000B" }}
aqm = {aqm}
[transport]
kind = "reno"
ecn = {str(ecn).lower()}
min_rto = "200ms"
[[workload]]
kind = "flows"
flows = [ {specs} ]
"""
    path = tmp_path / f"aqm_{flows}_{ecn}.toml"
    path.write_text(text)
    r = dcnsim.run(str(path))
    p = r.ports
    bn = p[(p["node_name"] == "left") & (p["peer_name"] == "right")].iloc[0]
    return {"result": r, "mean_delay_ms": float(bn["mean_depth_bytes"]) * 8 / RATE * 1e3, "tx": int(bn["tx_bytes"])}


@pytest.mark.parametrize("flows,ecn", [(1, True), (4, True), (4, False)])
def test_pi2_holds_queue_delay_at_target(tmp_path, flows, ecn):
    """PI2 (target 15 ms, the Linux defaults) integrates the delay error until the queue's
    sojourn sits at the target: with 1 or 4 Reno flows, marked or dropped, the time-averaged
    queue over 60 s (the start-up included) is 15 ms +- 30%, and the link stays busy (above
    90% of 40 Mbit/s)."""
    m = _dumbbell(tmp_path, flows, '{ kind = "pi2" }', ecn)
    assert 10.5 <= m["mean_delay_ms"] <= 19.5, m["mean_delay_ms"]
    assert m["tx"] * 8 / 60 > 0.9 * RATE


def test_red_seed_line_keeps_the_average_between_thresholds(tmp_path):
    """Seed 002's tc line (min 120 KB, max 360 KB, burst 220, ECN, 40 Mbit/s): 4 Reno flows
    with ECN keep the time-averaged queue between min and max (24-72 ms at 40 Mbit/s), with
    no drop (ECN marks instead) and the link busy."""
    aqm = ('{ kind = "red", limit = "1600000B", min = "120000B", max = "360000B", avpkt = "1000B", '
           'burst = 220, ecn = true, bandwidth = "40Mbps" }')
    m = _dumbbell(tmp_path, 4, aqm, True)
    assert 24 <= m["mean_delay_ms"] <= 72, m["mean_delay_ms"]
    assert m["result"].summary["packets_dropped"] == 0
    assert m["tx"] * 8 / 60 > 0.9 * RATE
