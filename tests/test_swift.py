"""Swift (`transport.cc = "swift"`, Kumar et al., SIGCOMM 2020) over TCP end to end on a
100 Gbps dumbbell: the round trip settles at Swift's target delay (base target + hops x
hop_scale + the flow-scaling term at the flows' windows), the link stays full, and the
flows share it evenly, a joining flow included; over TCP and over RoCE (where the window
caps the RoCE sender's flight). The law (target, AIMD, the cut limit,
pacing below one packet) is tested beside the code (host/cc/swift.rs)."""

from __future__ import annotations

import math
from pathlib import Path


import pytest

import dcnsim
from dcnsim.goodput import jain

LINK_BPS = 100e9
MTU, PAYLOAD = 1500, 1460
BIN_US = 20.0
# htsim's constants, the defaults: base target 20 us, h = base / 6.55, fs_range = 5 base
BASE_US, HOP_US, FS_RANGE_US = 20.0, 20.0 / 6.55, 100.0
FS_ALPHA = FS_RANGE_US / (1 / math.sqrt(0.1) - 1 / math.sqrt(100))
FS_BETA = -FS_ALPHA / math.sqrt(100)
HOPS = 2  # left and right switches
# three 1 us links each way, a full packet out and a 64 B ACK back
BASE_RTT_US = 6 + 3 * MTU * 8 / LINK_BPS * 1e6 + 3 * 64 * 8 / LINK_BPS * 1e6


def target_us(cwnd_pkts: float) -> float:
    fs = min(max(FS_ALPHA / math.sqrt(cwnd_pkts) + FS_BETA, 0.0), FS_RANGE_US)
    return BASE_US + HOPS * HOP_US + fs


def _run(tmp_path: Path, kind: str = "tcp") -> dcnsim.Result:
    text = f"""
[scenario]
name = "swift_dumbbell"
seed = 1
max_time = "8ms"
[topology]
kind = "dumbbell"
senders = 4
receivers = 1
host_link = {{ rate = "100Gbps", delay = "1us" }}
bottleneck = {{ rate = "100Gbps", delay = "1us" }}
[switch]
buffer = {{ model = "static", queue = "4MB" }}
[transport]
kind = "{kind}"
cc = "swift"
[metrics]
throughput_bin = "{BIN_US:g}us"
queue_sample = "1us"
[[workload]]
kind = "flows"
flows = [
  {{ src = 0, dst = 4, size = "10GB" }}, {{ src = 1, dst = 4, size = "10GB" }},
  {{ src = 2, dst = 4, size = "10GB" }}, {{ src = 3, dst = 4, size = "10GB", start = "4ms" }},
]
"""
    path = tmp_path / "swift.toml"
    path.write_text(text)
    return dcnsim.run(str(path))


@pytest.mark.parametrize("kind", ["tcp", "roce"])
def test_swift_holds_the_delay_at_its_target_and_shares_the_link(tmp_path, kind):
    r = _run(tmp_path, kind)
    ts = r.timeseries
    piv = ts.pivot_table(index="bin_start_ps", columns="flow", values="bytes", aggfunc="sum").fillna(0.0)
    piv = piv.reindex(columns=sorted(r.flows["flow_id"]), fill_value=0.0)
    t_us = piv.index.to_numpy() / 1e6
    g = piv.to_numpy() * 8 / (BIN_US * 1e-6) / 1e9
    depth = r.queue_series.groupby("time_ps")["total_depth_bytes"].sum()
    for lo, hi, n in [(1500, 4000, 3), (6000, 8000, 4)]:
        rates = g[(t_us >= lo) & (t_us < hi)][:, :n]
        total = rates.sum(axis=1).mean()
        assert total > 0.95 * LINK_BPS / 1e9 * PAYLOAD / MTU, (lo, total)
        per_flow = rates.mean(axis=0)
        assert jain(per_flow) > 0.98, (lo, per_flow)
        q = depth[(depth.index >= lo * 1e6) & (depth.index < hi * 1e6)].mean()
        rtt_us = BASE_RTT_US + q * 8 / LINK_BPS * 1e6
        # each flow's window is its share of the bandwidth-delay product at that RTT
        cwnd_pkts = (total / n) * 1e9 * MTU / PAYLOAD * rtt_us * 1e-6 / 8 / MTU
        want = target_us(cwnd_pkts)
        assert abs(rtt_us - want) / want < 0.15, (lo, rtt_us, want, cwnd_pkts)
    assert int(r.ports["drops"].sum()) == 0
