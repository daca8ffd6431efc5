"""Seed 004's future work, "higher RTT simulations" (`dcnsim reproduce seed004_sfc_rtt`):
each RTT case builds the round trip it names, scales what the seed derives from the BDP,
and on the small fabric shows where each mechanism stops holding (the regression guards of
docs/reproductions.md's "Higher RTT" tables, one seed)."""

from __future__ import annotations

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

import dcnsim
from dcnsim.api import shipped_scenarios
from dcnsim.reproduce.studies_seed004 import PFC_BDP, PFC_LINK, RTTS_US, RttCase

from test_seed004 import HOST_BPS, PATHS, _rtt_ps

PFC, PROXY, NATIVE = "PFC+DCQCN", "SFC proxy+DCQCN", "SFC native+DCQCN"


def _small(rtt_us: float):
    return RttCase(float(rtt_us))(tomllib.loads(shipped_scenarios()["seed004_sfc_rtt_small"].read_text()))


def _probe_rtt(s, dst_of) -> int:
    s = dict(s, scenario=dict(s["scenario"], max_time="10ms"), metrics={}, workload=[
        {"kind": "flows", "flows": [{"src": 0, "dst": dst_of(s["topology"]), "size": "1024B", "tag": "probe"}]}])
    s["scenario"].pop("arrivals_for", None)
    f = dcnsim.run(s).flows.iloc[0]
    assert bool(f["finished"]) and int(f["retx"]) == 0
    return int(f["fct_ps"])


@pytest.mark.parametrize("rtt_us", RTTS_US)
def test_each_case_builds_its_round_trip(rtt_us):
    """A one-segment probe from h0 to the first host of the next pod takes the case's RTT
    (to the host jitter, under 512 ps), the 4 aggregation-to-core crossings of a round trip
    carrying the extra; within a pod the round trip stays the seed's 7.6644 us."""
    s = _small(rtt_us)
    latency = float(s["switch"]["latency"].removesuffix("ns")) * 1e3
    inter = _probe_rtt(s, PATHS["inter-pod"][0])
    assert 0 <= inter - rtt_us * 1e6 < 512, (rtt_us, inter)
    intra = _probe_rtt(s, PATHS["intra-pod"][0])
    assert 0 <= intra - _rtt_ps(PATHS["intra-pod"][1], latency) < 512


@pytest.mark.parametrize("rtt_us", RTTS_US)
def test_bdp_derived_values_follow_the_rtt(rtt_us):
    """ECN's step and SFC's target at 1/3 of 100 Gbit/s x RTT, SFC's trigger at 2/3, its
    suppression at RTT/2, DCQCN's window at 1.25 RTT, the BDP-headroom variant at one BDP
    (absent at 12 us, where it is the seed's PFC+DCQCN), the seed's PFC untouched."""
    s = _small(rtt_us)
    bdp = HOST_BPS / 8 * rtt_us * 1e-6
    assert s["switch"]["aqm"]["threshold"] == f"{round(bdp / 3)}B"
    assert s["transport"]["dcqcn"]["window"] == f"{round(1.25 * rtt_us * 1e3, 3)}ns"
    v = {x["name"]: x for x in s["variant"]}
    for name in (PROXY, NATIVE):
        sfc = v[name]["switch"]["sfc"]
        assert (sfc["trigger"], sfc["target"], sfc["suppression"]) == (f"{round(2 * bdp / 3)}B", f"{round(bdp / 3)}B", f"{round(rtt_us / 2 * 1e3, 3)}ns")
    assert v[PFC]["switch"]["pfc"]["headroom"] == "150KB"
    assert "headroom" not in v[PFC_LINK]["switch"]["pfc"]
    assert (PFC_BDP in v) == (rtt_us != 12)
    if PFC_BDP in v:
        assert v[PFC_BDP]["switch"]["pfc"]["headroom"] == f"{round(bdp)}B"
    # the seed's own values at 12 us
    if rtt_us == 12:
        assert (s["topology"]["core_link"]["delay"], s["switch"]["aqm"]["threshold"], v[NATIVE]["switch"]["sfc"]["trigger"]) == ("500.0ns", "50000B", "100000B")


def _summary(rtt_us: int, variant: str):
    r = dcnsim.run(_small(rtt_us), variant=variant)
    sw = r.ports[~r.ports["is_host"].astype(bool)]
    return r.summary, int(sw["drops_headroom"].sum())


def test_pfc_not_retuned_drops_for_headroom_at_1ms_and_per_link_headroom_does_not():
    """At 12 us the seed's 150 KB of headroom holds (no drop); at 1000 us a 400G core link
    delivers 24.8 MB after XOFF and 150 KB overflows, so the lossless class loses packets;
    each port's headroom derived from its own link keeps it lossless."""
    s12, h12 = _summary(12, PFC)
    assert s12["packets_dropped"] == 0 and h12 == 0 and s12["pfc_frames"] > 0
    s, h = _summary(1000, PFC)
    assert h > 0 and s["data_packets_dropped"] > 0
    s, h = _summary(1000, PFC_LINK)
    assert s["packets_dropped"] == 0 and h == 0 and s["pfc_frames"] > 0
    assert s["flows_unfinished"] == 0


def test_sfc_stops_signalling_when_its_trigger_outgrows_the_queue():
    """SFC signals at the seed's RTT; at 1000 us its trigger (2/3 BDP, 8.3 MB) is above what
    the dynamic threshold lets one queue of the 16 MB pool hold (alpha 1: half the pool), so
    it never signals, and the buffer drops instead."""
    s12, _ = _summary(12, NATIVE)
    assert s12["sfc_sent"] > 0
    s, _ = _summary(1000, NATIVE)
    assert s["sfc_sent"] == 0 and s["data_packets_dropped"] > 0


# --------------------------------------------------------------------------- bigger scale

from dcnsim.reproduce.studies_seed004 import GROWTH_ARRIVALS, GROWTH_FACTORS, GrowthCase  # noqa: E402


@pytest.mark.parametrize("factor", GROWTH_FACTORS)
def test_each_growth_case_keeps_the_seeds_paths(factor):
    """`dcnsim reproduce seed004_sfc_scale`: the small fabric with ``factor`` times its pods
    has that many times the hosts and arrivals for GROWTH_ARRIVALS, and a one-segment probe
    from h0 to the last host (the farthest pod) and to the first host of the next pod takes
    the seed's inter-pod round trip, 12 us (6 links each way), at every size; within a pod
    the round trip stays the seed's."""
    base = tomllib.loads(shipped_scenarios()["seed004_sfc_rtt_small"].read_text())
    s = GrowthCase(factor)(base)
    t = s["topology"]
    assert t["pods"] == factor * base["topology"]["pods"] and t["core_wiring"] == "all"
    assert s["scenario"]["arrivals_for"] == GROWTH_ARRIVALS
    hosts = t["pods"] * t["tors_per_pod"] * t["hosts_per_tor"]
    latency = float(s["switch"]["latency"].removesuffix("ns")) * 1e3
    seed_rtt = _rtt_ps(PATHS["inter-pod"][1], latency)
    assert abs(seed_rtt - 12e6) < 1, seed_rtt
    for dst_of in (PATHS["inter-pod"][0], lambda t: hosts - 1):
        assert 0 <= _probe_rtt(s, dst_of) - seed_rtt < 512, (factor, dst_of(t))
    assert 0 <= _probe_rtt(s, PATHS["intra-pod"][0]) - _rtt_ps(PATHS["intra-pod"][1], latency) < 512


def test_a_growth_case_reading_memory_per_port_builds_where_the_seeds_pool_cannot():
    """`GrowthCase(factor, pool_per_port)`: the reading of a grown switch's memory the growth
    study needs past 320 core ports (16 MB cannot guarantee 50 KB to each). At 162 pods of
    the small fabric (324 core ports) SFC's variant is refused with the seed's 16 MB per
    switch, naming the key, and builds with 800 KB per port; the base's pool is gone and
    PFC's static queues are as they were; without the reading the case is what it was."""
    import warnings

    from dcnsim.reproduce.studies_seed004 import NATIVE, PFC

    base = tomllib.loads(shipped_scenarios()["seed004_sfc_rtt_small"].read_text())
    seeds, per_port = GrowthCase(81)(base), GrowthCase(81, "800KB")(base)
    assert seeds["switch"]["buffer"] == base["switch"]["buffer"]
    assert per_port["switch"]["buffer"].get("pool_per_port") == "800KB" and "pool" not in per_port["switch"]["buffer"]
    pfc = [next(v for v in s["variant"] if v["name"] == PFC) for s in (seeds, per_port)]
    assert pfc[0] == pfc[1]
    for s in (seeds, per_port):
        s["scenario"]["max_time"] = s["scenario"]["arrivals_for"] = "1us"
    with pytest.raises(Exception, match=r"switch\.buffer\.guaranteed: invalid value 50000 B: 324 ports"):
        dcnsim.run(seeds, variant=NATIVE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 1 us: nothing has time to act
        r = dcnsim.run(per_port, variant=NATIVE)
    assert r.summary["hosts"] == 162 * 32 and r.summary["end_reason"] == "max_time"


def test_the_large_growth_study_is_the_seeds_fabric_at_130_pods_fingerprinted_on_a_unit():
    """`dcnsim reproduce seed004_sfc_scale_large`: its 26x case is seed004_sfc_rtt at 130
    pods (8,320 hosts, 520-port cores) with 800 KB of SFC's pool per port; its 8x case runs
    only the SFC variants (PFC's static queues do not read the pool, so its runs would be
    seed004_sfc_scale's); both fingerprint on sfc_growth_unit, whose 26 pods are 208 hosts
    that keep the seed's 12 us between pods."""
    from dcnsim.reproduce import STUDIES
    from dcnsim.reproduce.core import case_scenario, fingerprint_jobs

    st = STUDIES["seed004_sfc_scale_large"]
    assert st.scales == ("full",) and st.fingerprint_scenario == "sfc_growth_unit"
    x8, x26 = st.cases
    full = case_scenario(st, x26, "full")
    t = full["topology"]
    assert t["pods"] * t["tors_per_pod"] * t["hosts_per_tor"] == 8320 and t["pods"] * t["aggs_per_pod"] == 520
    assert full["switch"]["buffer"]["pool_per_port"] == "800KB"
    assert fingerprint_jobs(st) == [(x8.label, PROXY), (x8.label, NATIVE), (x26.label, PFC), (x26.label, PROXY), (x26.label, NATIVE)]

    unit = x26.edit(tomllib.loads(shipped_scenarios()["sfc_growth_unit"].read_text()))
    u = unit["topology"]
    hosts = u["pods"] * u["tors_per_pod"] * u["hosts_per_tor"]
    assert hosts == 208
    assert 0 <= _probe_rtt(unit, lambda t: hosts - 1) - 12e6 < 512
