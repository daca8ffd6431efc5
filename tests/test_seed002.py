"""Seed 002's path (De Schepper et al., "Data Center to the Home", 2015): every shipped
seed002 scenario runs over the seed's testbed, "RTT = 8 ms (unloaded)" and "BDP = 27 full
sized packets" at 40 Mbit/s (slides 8, 13, 26), measured on the fabric each one builds."""

from __future__ import annotations

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

import dcnsim
from dcnsim.api import shipped_scenarios

SCENARIOS = ["seed002_dualq", "seed002_dualq_small", "seed002_queue_pdf", "seed002_queue_pdf_small"]
RTT_S = 8e-3  # the seed's unloaded RTT
PACKET = 1500  # a full-sized packet on the wire (MTU)
PAYLOAD = 1460  # its payload: MTU less the default 40 B TCP/IP header


def _cases():
    for name in SCENARIOS:
        base = tomllib.loads(shipped_scenarios()[name].read_text())
        for v in [None] + [v["name"] for v in base.get("variant", [])]:
            yield name, v


def _probe(name: str, variant):
    """The scenario with its workload replaced by one full-sized segment from the first
    sender to the first receiver on the idle fabric: its FCT (first bit out to the ACK back at
    the sender) is one unloaded round trip, the data packet's and the ACK's serialization
    included. The bottleneck rate, from the file."""
    s = tomllib.loads(shipped_scenarios()[name].read_text())
    s["scenario"]["max_time"] = "1s"
    receiver = s["topology"]["senders"]
    s["workload"] = [{"kind": "flows", "flows": [{"src": 0, "dst": receiver, "size": f"{PAYLOAD}B", "tag": "probe"}]}]
    for key in ("queue_sample", "queue_sample_from"):
        s["metrics"].pop(key, None)
    r = dcnsim.run(s, variant=variant)
    rate = s["topology"]["bottleneck"]["rate"]
    assert rate.endswith("Mbps")
    return r, float(rate[: -len("Mbps")]) * 1e6


@pytest.mark.parametrize("name,variant", list(_cases()))
def test_unloaded_rtt_is_8ms_and_bdp_27_packets(name, variant):
    """One full-sized segment's FCT on the idle path is 8 ms within 1 us (the delays are set
    to the ns, so the only slack is the engine's rounding, none in practice), and equals the
    ideal-FCT column (the same path by formula). BDP = 40 Mbit/s x RTT / (1500 B x 8) =
    26.7, which rounds to the seed's 27."""
    r, rate = _probe(name, variant)
    f = r.flows.iloc[0]
    assert bool(f["finished"]) and int(f["retx"]) == 0
    rtt = int(f["fct_ps"]) * 1e-12
    assert abs(rtt - RTT_S) < 1e-6, (name, variant, rtt)
    assert int(f["fct_ps"]) == int(f["ideal_fct_ps"])
    bdp = rate * rtt / (PACKET * 8)
    assert round(bdp) == 27, bdp
