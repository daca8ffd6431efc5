"""TIMELY (`transport.cc = "timely"`, Mittal et al., SIGCOMM 2015) end to end on a 10 Gbps
dumbbell (the paper's link speed) with its default thresholds T_low = 50 us and T_high =
500 us. A lone flow never sees an RTT above T_low, so it only increases and runs at line
rate with no queue. Two flows fill the link until the RTT passes T_low, where the RTT
gradient cuts them: the RTT is then held around T_low, well below T_high. The law itself
is tested beside the code (host/timely.rs)."""

from __future__ import annotations

from pathlib import Path

import dcnsim

LINK_BPS = 10e9
T_LOW_US, T_HIGH_US = 50.0, 500.0
# three 2 us links each way, a 1500 B packet out (1.2 us a hop) and a 64 B ACK back
BASE_RTT_US = 12 + 3 * 1.2 + 3 * 0.0512
JOIN_MS = 4.0


def _run(tmp_path: Path) -> dcnsim.Result:
    text = f"""
[scenario]
name = "timely_dumbbell"
seed = 1
max_time = "12ms"
[topology]
kind = "dumbbell"
senders = 2
receivers = 1
host_link = {{ rate = "10Gbps", delay = "2us" }}
bottleneck = {{ rate = "10Gbps", delay = "2us" }}
[switch]
buffer = {{ model = "static", queue = "4MB" }}
[transport]
kind = "roce"
cc = "timely"
[metrics]
throughput_bin = "100us"
queue_sample = "1us"
[[workload]]
kind = "flows"
flows = [ {{ src = 0, dst = 2, size = "1GB" }}, {{ src = 1, dst = 2, size = "1GB", start = "{JOIN_MS}ms" }} ]
"""
    path = tmp_path / "timely.toml"
    path.write_text(text)
    return dcnsim.run(str(path))


def test_timely_holds_the_rtt_near_t_low(tmp_path):
    r = _run(tmp_path)
    ts = r.timeseries
    alone = ts[(ts["bin_start_ps"] >= 1e9) & (ts["bin_start_ps"] < JOIN_MS * 1e9)]
    gbps = alone.groupby("bin_start_ps")["bytes"].sum() * 8 / 100e-6 / 1e9
    # a lone flow: at line rate (goodput 1460 / 1500 of it), with nothing queued
    assert gbps.min() > 0.97 * LINK_BPS / 1e9 * 1460 / 1500, gbps.describe()
    qs = r.queue_series
    depth = qs.groupby("time_ps")["total_depth_bytes"].sum()
    before = depth[(depth.index >= 1e9) & (depth.index < JOIN_MS * 1e9)]
    assert before.max() <= 3000, before.max()
    # two flows, after the join's transient: the RTT (base + the bottleneck's queueing
    # delay) peaks just past T_low, where the gradient cuts, and never nears T_high
    late = depth[depth.index >= (JOIN_MS + 3) * 1e9]
    rtt_us = BASE_RTT_US + late * 8 / LINK_BPS * 1e6
    assert 0.8 * T_LOW_US < rtt_us.max() < 1.6 * T_LOW_US, rtt_us.max()
    assert rtt_us.max() < T_HIGH_US
    assert not r.summary.get("warnings")
