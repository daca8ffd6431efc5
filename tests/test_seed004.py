"""Seed 004's fabric (Blendin et al., "Source Flow Control simulation results", IEEE 802.1,
May 2022, "System Configuration in FabSim-X"): "Link delay: 0.5 us", "Link speed SW to SW:
400 Gbps", "Link speed NIC to SW: 100 Gbps", "MTU: 1024 B", "RTT 12 us", measured on the
fabric every shipped seed004 scenario builds, and the thresholds the seed derives from that
RTT's bandwidth-delay product."""

from __future__ import annotations

import copy

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

import dcnsim
from dcnsim.api import shipped_scenarios

SCENARIOS = ["seed004_sfc_benefits", "seed004_sfc_benefits_small", "seed004_sfc_fairness_intra", "seed004_sfc_fairness_inter"]
RTT_PS = 12_000_000  # the seed's "RTT 12 us"
HOST_BPS, FABRIC_BPS = 100e9, 400e9
DELAY_PS = 500_000  # "Link delay: 0.5 us"
PAYLOAD = 1024  # "MTU: 1024 B" of RoCE payload
FRAME = PAYLOAD + 62  # with the RoCEv2 headers the scenarios choose
ACK = 64  # transport.ack_size's default


def _cases():
    for name in SCENARIOS:
        base = tomllib.loads(shipped_scenarios()[name].read_text())
        for v in [None] + [v["name"] for v in base.get("variant", [])]:
            yield name, v


def _ser_ps(nbytes: int, bps: float) -> float:
    return nbytes * 8 / bps * 1e12


def _rtt_ps(rates, latency_ps: float) -> float:
    """Unloaded round trip of one frame and its ACK over a path of links (`rates`, the
    sender's NIC link first): per link and direction the propagation delay and the
    serialization (store and forward), and the forwarding latency of every switch crossed,
    one fewer than the links, each way."""
    one_way = len(rates) * DELAY_PS + (len(rates) - 1) * latency_ps
    return 2 * one_way + sum(_ser_ps(FRAME, r) + _ser_ps(ACK, r) for r in rates)


def _probe(name: str, variant, dst_of):
    """The scenario with its workload replaced by one full-sized segment from host 0 on the
    idle fabric: its FCT (first bit out to the ACK back at the sender) is one round trip."""
    s = tomllib.loads(shipped_scenarios()[name].read_text())
    s["scenario"]["max_time"] = "1ms"
    s["scenario"].pop("arrivals_for", None)
    s["metrics"] = {}
    t = s["topology"]
    s["workload"] = [{"kind": "flows", "flows": [{"src": 0, "dst": dst_of(t), "size": f"{PAYLOAD}B", "tag": "probe"}]}]
    f = dcnsim.run(s, variant=variant).flows.iloc[0]
    assert bool(f["finished"]) and int(f["retx"]) == 0
    assert 0 <= int(f["fct_ps"]) - int(f["ideal_fct_ps"]) < 512  # the host jitter: under 256 ps per host frame
    return int(f["fct_ps"]), s


PATHS = {
    # h0 -> its ToR -> h1
    "intra-ToR": (lambda t: 1, [HOST_BPS, HOST_BPS]),
    # h0 -> ToR -> aggregation -> the pod's second ToR -> its first host
    "intra-pod": (lambda t: t["hosts_per_tor"], [HOST_BPS, FABRIC_BPS, FABRIC_BPS, HOST_BPS]),
    # h0 -> ToR -> aggregation -> core -> aggregation -> ToR -> the first host of pod 1
    "inter-pod": (lambda t: t["hosts_per_tor"] * t["tors_per_pod"], [HOST_BPS, FABRIC_BPS, FABRIC_BPS, FABRIC_BPS, FABRIC_BPS, HOST_BPS]),
}


@pytest.mark.parametrize("name,variant", list(_cases()))
def test_unloaded_rtt_is_the_seeds_12us(name, variant):
    """Inter-pod the round trip is the seed's 12 us to the picosecond: 12 x 0.5 us of
    propagation, 260.64 ns of frame and 15.36 ns of ACK serialization, and 10 switch
    crossings at switch.latency = 572.4 ns. The same latency gives the shorter paths their
    round trips by the same formula: 3.3288 us within a ToR, 7.6644 us within a pod. The
    only slack is the host jitter (under 256 ps per frame a host sends, docs/mechanisms.md):
    the data frame and the ACK, so less than 512 ps, never early."""
    latency = None
    for path, (dst_of, rates) in PATHS.items():
        rtt, s = _probe(name, variant, dst_of)
        latency = float(s["switch"]["latency"].removesuffix("ns")) * 1e3
        assert 0 <= rtt - _rtt_ps(rates, latency) < 512, (name, variant, path, rtt)
        if path == "inter-pod":
            assert 0 <= rtt - RTT_PS < 512, (name, variant, rtt)
    assert latency == 572_400


@pytest.mark.parametrize("name", SCENARIOS)
def test_thresholds_are_the_seeds_fractions_of_the_bdp(name):
    """The seed derives its thresholds from the 100 Gbit/s x 12 us = 150 KB BDP: "ECN
    threshold: 50 KB (1/3 BDP)", "Trigger threshold: 100 KB (2/3 BDP)", "Target threshold:
    50 KB (1/3 BDP)" (benefits; the fairness runs set "Target threshold: 64 KB"),
    "Suppression period: 6 us (1/2 RTT)". The ECN threshold is the scenario's; SFC's
    trigger, target and suppression are the engine's defaults unless a variant sets them."""
    bdp = HOST_BPS * RTT_PS * 1e-12 / 8
    assert bdp == 150_000
    s = tomllib.loads(shipped_scenarios()[name].read_text())
    assert s["switch"]["aqm"] == {"kind": "step", "threshold": "50KB"}
    assert 50_000 == bdp / 3
    sfc = [v["switch"]["sfc"] for v in s["variant"] if "sfc" in v.get("switch", {})]
    assert len(sfc) == 2
    for v in sfc:
        # the defaults (switch/sfc.rs: 100 KB, 50 KB, 6 us) are the seed's benefits values
        assert "trigger" not in v and "suppression" not in v
        assert v.get("target", "50KB") == ("64KB" if "fairness" in name else "50KB")
    assert 100_000 == pytest.approx(2 * bdp / 3) and 6_000_000 == RTT_PS / 2


def test_a_pool_per_port_is_the_seeds_pool_where_the_switches_have_its_ports():
    """`switch.buffer.pool_per_port` (the growth study's reading of a grown core): on a fabric
    whose switches all have 4 ports, 4 MB per port is a 16 MB pool per switch, and SFC's
    run is the same run byte for byte; with 50 KB guaranteed per port a pool of 150 KB per
    switch is refused (4 x 50 KB) and the same memory per port of 37.5 KB too, naming the
    key each time."""
    base = {
        "scenario": {"name": "pool_per_port", "max_time": "2ms", "seed": 3},
        "topology": {"kind": "fat_tree3", "k": 4, "host_link": {"rate": "100Gbps", "delay": "1us"}, "fabric_link": {"rate": "100Gbps", "delay": "1us"}},
        "switch": {"buffer": {"model": "shared", "pool": "16MB", "guaranteed": "50KB"}, "aqm": {"kind": "ramp", "kmin": "20KB", "kmax": "200KB", "pmax": 0.2},
                   "sfc": {}},
        "transport": {"kind": "dcqcn"},
        "workload": [{"kind": "incast", "fan_in": 6, "size": "200KB", "period": "200us", "stop": "600us"}],
    }
    runs = {}
    for name, buf in (("pool", {"pool": "16MB"}), ("per port", {"pool_per_port": "4MB"})):
        sc = copy.deepcopy(base)
        sc["switch"]["buffer"] = {"model": "shared", "guaranteed": "50KB", **buf}
        runs[name] = dcnsim.run(sc, check_invariants=True)
    a, b = runs["pool"], runs["per port"]
    assert a.summary["flows_finished"] == a.summary["flows_total"] > 0
    assert a.flows.equals(b.flows) and a.ports.equals(b.ports)
    for buf in ({"pool": "150KB"}, {"pool_per_port": "37500B"}):
        sc = copy.deepcopy(base)
        sc["switch"]["buffer"] = {"model": "shared", "guaranteed": "50KB", **buf}
        with pytest.raises(Exception, match=r"switch\.buffer\.guaranteed: invalid value 50000 B"):
            dcnsim.run(sc)
