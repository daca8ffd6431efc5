"""FQ-CoDel (`switch.fq_codel`, RFC 8290) end to end on a 10 Gbps dumbbell: four bulk Reno
flows and a sender of small messages. Against a drop-tail FIFO of 1 MB, the flow queues let
the small messages past the bulk backlog (their completion is near the unloaded round trip,
not the FIFO's queueing delay), CoDel holds the bottleneck's delay near its target, the bulk
flows share the link evenly, and with ECN CoDel marks where it would drop. CoDel's control
law and the validation are tested beside the code (switch/fq_codel.rs)."""

from __future__ import annotations

from pathlib import Path

import dcnsim

TARGET_US = 20.0
LINK_BPS = 10e9
# 2 x (5 + 10 + 5) us of propagation: the small messages' round trip with empty queues
BASE_RTT_US = 40.0
MESSAGES = [20, 30, 40]  # ms


def _run(tmp_path: Path, fq_codel: bool, ecn: bool = False) -> dcnsim.Result:
    mice = ", ".join(f'{{ src = 4, dst = 5, size = "3000B", start = "{t}ms" }}' for t in MESSAGES)
    fq = f'fq_codel = {{ target = "{TARGET_US:g}us", interval = "200us" }}' if fq_codel else ""
    text = f"""
[scenario]
name = "fq_codel"
seed = 1
max_time = "60ms"
[topology]
kind = "dumbbell"
senders = 5
receivers = 1
host_link = {{ rate = "40Gbps", delay = "5us" }}
bottleneck = {{ rate = "10Gbps", delay = "10us" }}
[switch]
buffer = {{ model = "static", queue = "1MB" }}
{fq}
[transport]
kind = "reno"
ecn = {str(ecn).lower()}
min_rto = "1ms"
[[workload]]
kind = "flows"
flows = [
  {{ src = 0, dst = 5, size = "1GB" }}, {{ src = 1, dst = 5, size = "1GB" }},
  {{ src = 2, dst = 5, size = "1GB" }}, {{ src = 3, dst = 5, size = "1GB" }},
  {mice}
]
"""
    path = tmp_path / f"fq_{fq_codel}_{ecn}.toml"
    path.write_text(text)
    return dcnsim.run(str(path))


def _bottleneck(r):
    p = r.ports
    return p[(p["node_name"] == "left") & (p["peer_name"] == "right")].iloc[0]


def test_small_messages_pass_the_bulk_backlog(tmp_path):
    fq, fifo = _run(tmp_path, True), _run(tmp_path, False)
    mice = lambda r: r.flows[r.flows["src"] == 4]["fct_ps"].astype(float) / 1e6  # noqa: E731
    fq_us, fifo_us = mice(fq), mice(fifo)
    assert len(fq_us) == len(MESSAGES) and fq_us.notna().all()
    # one round trip (the first window carries both packets) and the serialisation of 3 KB;
    # a FIFO adds its standing queue of up to 1 MB (800 us at 10G)
    assert fq_us.max() < 1.5 * BASE_RTT_US, fq_us.tolist()
    assert fifo_us.min() > 5 * fq_us.max(), (fifo_us.tolist(), fq_us.tolist())


def test_codel_holds_the_delay_near_target_and_the_link_full(tmp_path):
    r = _run(tmp_path, True)
    bn = _bottleneck(r)
    delay_us = float(bn["mean_depth_bytes"]) * 8 / LINK_BPS * 1e6
    assert 0.25 * TARGET_US < delay_us < 2 * TARGET_US, delay_us
    # CoDel drops at dequeue, counted on the queue as AQM drops; the buffer never fills
    assert r.summary["fq_codel_drops"] == int(bn["drops_aqm"]) > 0
    assert int(bn["drops_buffer_full"]) == 0
    assert int(bn["tx_bytes"]) * 8 / 60e-3 > 0.95 * LINK_BPS
    # the four bulk flows share the link evenly (Jain's index)
    bulk = r.flows[r.flows["src"] < 4]["delivered_bytes"].astype(float)
    jain = bulk.sum() ** 2 / (len(bulk) * (bulk**2).sum())
    assert jain > 0.99, bulk.tolist()


def test_ecn_capable_packets_are_marked_not_dropped(tmp_path):
    r = _run(tmp_path, True, ecn=True)
    bn = _bottleneck(r)
    assert r.summary["fq_codel_drops"] == 0 and int(bn["drops"]) == 0
    assert r.summary["fq_codel_marks"] == int(bn["ecn_marks"]) > 0
    delay_us = float(bn["mean_depth_bytes"]) * 8 / LINK_BPS * 1e6
    assert delay_us < 2 * TARGET_US, delay_us
